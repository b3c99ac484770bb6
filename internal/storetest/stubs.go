package storetest

var auditTests, dataTests []test
