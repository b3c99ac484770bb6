package storage

// Test access to the start-up inspection.

var InspectDataFile = inspectDataFile
