package storage

// Test access to the start-up inspection.

// InspectDataFile runs the start-up inspection and returns its error.
func InspectDataFile(path string) error {
	_, err := inspectDataFile(path)
	return err
}
