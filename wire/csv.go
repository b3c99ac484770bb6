package wire

import (
	"encoding/csv"
	"io"
	"strings"
	"unicode/utf8"
)

// CSVWriter writes the CSV files linkbolt serves (the analytics and audit
// log exports) with every cell a spreadsheet would run as a formula made
// text, as OWASP's "CSV Injection" page describes: a cell beginning with
// =, +, -, @, a tab or a carriage return gets a single quote in front.
// What strangers and members type reaches these files (a failed login's
// e-mail, a key's or a member's name, a referrer's host), and a formula
// in a spreadsheet can fetch URLs or, in older ones, run commands. Every
// CSV linkbolt writes goes through here, so no export can forget it.
type CSVWriter struct {
	w   *csv.Writer
	row []string
}

// NewCSVWriter returns a CSVWriter writing to w.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w)} }

// Write writes one row, its cells made safe by CSVCell.
func (c *CSVWriter) Write(record []string) error {
	c.row = c.row[:0]
	for _, v := range record {
		c.row = append(c.row, CSVCell(v))
	}
	return c.w.Write(c.row)
}

// Flush writes what is buffered to the underlying writer.
func (c *CSVWriter) Flush() { c.w.Flush() }

// Error reports an error of an earlier Write or Flush.
func (c *CSVWriter) Error() error { return c.w.Error() }

// CSVCell returns v as a cell a spreadsheet shows as the text it is. A
// spreadsheet hides the quote and shows the rest; a program that reads
// the file gets the quote too, which is why only cells that would start a
// formula carry one. The values linkbolt writes of its own (ids, times,
// counts, URLs, which start with a letter or a digit) never do.
//
// Spreadsheets differ in what they skip before a formula, so the test
// looks past leading white space (a cell " =1" or "\n=1" is neutralised
// too) and takes the full-width forms (＝ ＋ － ＠), which some turn into
// their ASCII forms on import, for what they stand for.
func CSVCell(v string) string {
	rest := strings.TrimLeft(v, " \n\u00a0\u3000")
	if rest == "" {
		return v
	}
	switch rest[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + v
	}
	if r, _ := utf8.DecodeRuneInString(rest); r == '＝' || r == '＋' || r == '－' || r == '＠' {
		return "'" + v
	}
	return v
}
