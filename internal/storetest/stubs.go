package storetest

var (
	linkTests, clickTests, campaignTests, qrTests, domainTests, webhookTests []test
	auditTests, blocklistTests, importTests, certTests, dataTests            []test
)
