# linkbolt's container image: the static binary of a release and the CA
# certificates, on nothing else (no base image to pull, no shell, no
# package manager). Build the release first, then the image:
#
#   go run ./release --targets linux/amd64,linux/arm64
#   docker build -t linkbolt .
#
# (docker buildx build --platform linux/amd64,linux/arm64 -t linkbolt . for
# both architectures.) See "Docker" in docs/install.md.
FROM scratch

# Set by BuildKit to the architecture of the image being built.
ARG TARGETARCH

# Go reads /etc/ssl/certs/ca-certificates.crt for HTTPS to webhooks, the
# single sign-on provider, other shorteners' APIs and the ACME server.
COPY dist/docker/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
# The data directory, owned by the user below so the volume it becomes is
# writable.
COPY --chown=65532:65532 dist/docker/data/ /data/
COPY dist/linux_${TARGETARCH}/linkbolt /linkbolt

# No root: a numeric user, since the image has no /etc/passwd.
USER 65532:65532
ENV LINKBOLT_STORAGE_PATH=/data/linkbolt.db \
    LINKBOLT_SERVER_LISTEN=:8080
VOLUME ["/data"]
EXPOSE 8080
ENTRYPOINT ["/linkbolt"]
CMD ["serve"]
