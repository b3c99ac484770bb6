package storetest

var (
	clickTests, campaignTests, qrTests, domainTests, webhookTests []test
	auditTests, blocklistTests, importTests, certTests, dataTests []test
)
