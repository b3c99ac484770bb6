package storetest

var (
	campaignTests, qrTests, domainTests, webhookTests             []test
	auditTests, blocklistTests, importTests, certTests, dataTests []test
)
