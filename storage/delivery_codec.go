package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/linkbolt/linkbolt/link"
)

// A delivery record is binary, so that the outbox's hot paths (a batch of
// clicks writing a delivery per click, the dispatcher reading queue heads
// and recording attempts) do not scan their payload as JSON:
//
//	version (1 byte, 1)
//	status (1 byte: 0 pending, 1 succeeded, 2 failed)
//	uvarints: webhook, workspace, event (0 for a ping), queue (0 when not
//	          pending), attempts, response code
//	varints:  duration, next attempt (unix nanos, 0 for none), queued at,
//	          created at, updated at (unix nanos)
//	uvarint length + event type, uvarint length + last error
//	the payload (JSON) to the end
//
// Times are kept to the nanosecond in UTC; a zero time is written as 0.
const deliveryVersion = 1

var deliveryStatuses = [...]link.DeliveryStatus{link.DeliveryPending, link.DeliverySucceeded, link.DeliveryFailed}

var errShortDelivery = errors.New("truncated delivery record")

// appendTo appends the encoded record to b.
func (r *deliveryRecord) appendTo(b []byte) []byte {
	status := byte(0)
	for i, s := range deliveryStatuses {
		if string(s) == r.Status {
			status = byte(i)
		}
	}
	b = append(b, deliveryVersion, status)
	for _, v := range [...]uint64{r.Webhook, r.Workspace, r.Event, r.Queue, uint64(r.Attempts), uint64(r.ResponseCode)} {
		b = binary.AppendUvarint(b, v)
	}
	var next int64
	if r.NextAttemptAt != nil {
		next = unixNanos(*r.NextAttemptAt)
	}
	for _, v := range [...]int64{int64(r.Duration), next, unixNanos(r.QueuedAt), unixNanos(r.CreatedAt), unixNanos(r.UpdatedAt)} {
		b = binary.AppendVarint(b, v)
	}
	b = appendLenString(b, r.Type)
	b = appendLenString(b, r.LastError)
	return append(b, r.Payload...)
}

// decode reads an encoded record. The payload is copied, so the record
// outlives the transaction.
func (r *deliveryRecord) decode(v []byte) error {
	if len(v) < 2 || v[0] != deliveryVersion {
		return fmt.Errorf("delivery record: unknown version")
	}
	if int(v[1]) >= len(deliveryStatuses) {
		return fmt.Errorf("delivery record: unknown status %d", v[1])
	}
	*r = deliveryRecord{Status: string(deliveryStatuses[v[1]])}
	v = v[2:]
	var us [6]uint64
	for i := range us {
		n, size := binary.Uvarint(v)
		if size <= 0 {
			return errShortDelivery
		}
		us[i], v = n, v[size:]
	}
	var is [5]int64
	for i := range is {
		n, size := binary.Varint(v)
		if size <= 0 {
			return errShortDelivery
		}
		is[i], v = n, v[size:]
	}
	var strs [2]string
	for i := range strs {
		b, rest, ok := readLenBytes(v)
		if !ok {
			return errShortDelivery
		}
		strs[i], v = string(b), rest
	}
	r.Webhook, r.Workspace, r.Event, r.Queue = us[0], us[1], us[2], us[3]
	r.Attempts, r.ResponseCode = int(us[4]), int(us[5])
	r.Duration = time.Duration(is[0])
	if is[1] != 0 {
		next := fromUnixNanos(is[1])
		r.NextAttemptAt = &next
	}
	r.QueuedAt, r.CreatedAt, r.UpdatedAt = fromUnixNanos(is[2]), fromUnixNanos(is[3]), fromUnixNanos(is[4])
	r.Type, r.LastError = strs[0], strs[1]
	r.Payload = append([]byte{}, v...)
	return nil
}

func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
