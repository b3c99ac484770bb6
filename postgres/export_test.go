package postgres

// EachTop calls fn with each entry of tops, a tops column of the click
// aggregates, in its order.
func EachTop(tops []byte, fn func(dim int, value string, clicks, bots, inherited int64)) error {
	return eachTop(tops, func(dim int16, e topEntry) { fn(int(dim), e.value, e.clicks, e.bots, e.inherited) })
}
