package storage

// rawSearchMatch reports whether the encoded link record raw contains the
// lower-case text q in a searched field (searchMatches), reading the
// record without decoding it, and the record's workspace. known is false
// when the record cannot be read that way, and the caller decodes it: a
// searched string encoding/json did not write as itself (escapes), or
// one that is not ASCII (whose case mapping strings.ToLower decides).
// Records are written by putJSON from linkRecord, whose fields come in
// this order: ws, alias, domain (when set), dest, tags (when set).
func rawSearchMatch(raw []byte, q []byte) (wid uint64, match, known bool) {
	r := rawReader{b: raw}
	if !r.literal(`{"ws":`) {
		return 0, false, false
	}
	wid, ok := r.number()
	if !ok || !r.literal(`,"alias":"`) {
		return 0, false, false
	}
	alias, ok := r.str()
	if !ok {
		return 0, false, false
	}
	if r.literal(`,"domain":"`) {
		if _, ok := r.str(); !ok {
			return 0, false, false
		}
	}
	if !r.literal(`,"dest":"`) {
		return 0, false, false
	}
	dest, ok := r.str()
	if !ok {
		return 0, false, false
	}
	if len(dest) > SearchDestinationBytes {
		dest = dest[:SearchDestinationBytes]
	}
	match = containsLowerASCII(alias, q) || containsLowerASCII(dest, q)
	if r.literal(`,"tags":[`) {
		for first := true; ; first = false {
			if r.literal("]") {
				break
			}
			if !first && !r.literal(",") || !r.literal(`"`) {
				return 0, false, false
			}
			t, ok := r.str()
			if !ok {
				return 0, false, false
			}
			match = match || containsLowerASCII(t, q)
		}
	}
	return wid, match, true
}

// containsLowerASCII reports whether the ASCII s, lower-cased, contains q.
func containsLowerASCII(s, q []byte) bool {
	if len(q) == 0 {
		return true
	}
	for i := 0; i+len(q) <= len(s); i++ {
		j := 0
		for ; j < len(q); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != q[j] {
				break
			}
		}
		if j == len(q) {
			return true
		}
	}
	return false
}

// rawReader reads the JSON of a link record as encoding/json writes it.
type rawReader struct {
	b []byte
	i int
}

func (r *rawReader) literal(s string) bool {
	if len(r.b)-r.i >= len(s) && string(r.b[r.i:r.i+len(s)]) == s {
		r.i += len(s)
		return true
	}
	return false
}

func (r *rawReader) number() (uint64, bool) {
	var n uint64
	start := r.i
	for r.i < len(r.b) && '0' <= r.b[r.i] && r.b[r.i] <= '9' && r.i-start < 19 {
		n = n*10 + uint64(r.b[r.i]-'0')
		r.i++
	}
	return n, r.i > start
}

// str reads the rest of a string whose opening quote was read, and its
// closing quote; false for a string with an escape or a byte that is not
// ASCII.
func (r *rawReader) str() ([]byte, bool) {
	start := r.i
	for ; r.i < len(r.b); r.i++ {
		switch c := r.b[r.i]; {
		case c == '"':
			s := r.b[start:r.i]
			r.i++
			return s, true
		case c == '\\' || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}
