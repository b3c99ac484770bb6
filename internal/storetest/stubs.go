package storetest

var (
	webhookTests          []test
	auditTests, dataTests []test
)
