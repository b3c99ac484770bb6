package dump

import (
	"context"
	"errors"
	"testing"
)

// emitUsers is a dump of n users.
func emitUsers(n int) func(context.Context, Emit) error {
	return func(_ context.Context, emit Emit) error {
		for i := range n {
			if err := emit(&User{Seq: uint64(i + 1)}); err != nil {
				return err
			}
		}
		return emit(&Link{Seq: 1})
	}
}

func TestStreamInOrder(t *testing.T) {
	s := Stream(context.Background(), emitUsers(10000))
	defer s.Close()
	for i := range 10000 {
		r, ok := s.NextOf("users")
		if !ok || r.(*User).Seq != uint64(i+1) {
			t.Fatalf("record %d: %v, %v", i, r, ok)
		}
	}
	if _, ok := s.NextOf("users"); ok {
		t.Fatal("a user after the last")
	}
	if r := s.Next(); r == nil || r.Kind() != "links" {
		t.Fatalf("the link: %v", r)
	}
	if err := s.Ended(); err != nil {
		t.Fatal(err)
	}
	if s.Next() != nil || s.Peek() != nil {
		t.Fatal("the end does not stay the end")
	}
}

func TestStreamError(t *testing.T) {
	boom := errors.New("boom")
	s := Stream(context.Background(), func(_ context.Context, emit Emit) error {
		if err := emit(&User{}); err != nil {
			return err
		}
		return boom
	})
	defer s.Close()
	for s.Next() != nil {
	}
	if err := s.Err(); !errors.Is(err, boom) {
		t.Fatalf("Err: %v, want boom", err)
	}
}

// A Load that stops early closes the stream, and the Dump ends.
func TestStreamClose(t *testing.T) {
	s := Stream(context.Background(), emitUsers(1_000_000))
	s.Next()
	s.Close()
	if err := s.Err(); err == nil {
		t.Fatal("a closed stream reports no error")
	}
}

// A context that ends stops the Dump.
func TestStreamCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := Stream(ctx, emitUsers(1_000_000))
	defer s.Close()
	s.Next()
	cancel()
	for s.Next() != nil {
	}
	if err := s.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err: %v, want context.Canceled", err)
	}
}
