package storage

// AttemptTxs returns the number of write transactions the service began
// to record attempts.
func (s *WebhookService) AttemptTxs() uint64 { return s.attempts.txs.Load() }
