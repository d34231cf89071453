package parse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// jsonSyntax reports where a JSON document (data that starts with { or
// [) breaks JSON's syntax, which the YAML parser would place less
// precisely.
func jsonSyntax(name string, data []byte) error {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
		return nil
	}
	var v any
	var se *json.SyntaxError
	if err := json.Unmarshal(data, &v); !errors.As(err, &se) {
		return nil
	}
	before := data[:se.Offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := max(1, len(before)-bytes.LastIndexByte(before, '\n')-1) // Offset counts the byte at fault
	return &Problem{File: name, Line: line, Column: col, Field: "(syntax)", Message: se.Error()}
}

// syntaxError turns err, the error dec's YAML parser returned for data,
// into a Problem, placed at the character the parser
// stopped at (see problemMark); at the line err names when the parser
// does not tell.
func syntaxError(name string, data []byte, dec *yaml.Decoder, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if _, err := fmt.Sscanf(msg, "line %d:", &line); err == nil {
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
	}
	col := 1
	if l, c, ok := problemMark(data, dec); ok {
		line, col = l, c
	}
	return &Problem{File: name, Line: line, Column: col, Field: "(syntax)", Message: msg}
}

// The kinds of error of the YAML parser's lower layers (yaml_error_type_t)
// that carry a position.
const (
	yamlReaderError  = 2 // a byte that is not allowed: at problem_offset
	yamlScannerError = 3 // at problem_mark
	yamlParserError  = 4 // at problem_mark
)

// problemMark is the line and column (from 1) of the character at which
// the YAML parser behind dec, reading data, found a syntax error: its
// problem mark. The parser's error text does not carry it: the line it
// gives is its context mark's, the start of the block or flow collection
// it was reading (counted from 0 for a parser error), so an unclosed
// bracket or a tab is reported lines away. The mark is read from the
// parser's state, which the Decoder keeps after the error; ok is false
// when that state is not the shape of the go.yaml.in/yaml/v3 this
// package is built with, or holds no position.
func problemMark(data []byte, dec *yaml.Decoder) (line, col int, ok bool) {
	defer func() {
		if recover() != nil { // a field of another kind: another version of the parser
			line, col, ok = 0, 0, false
		}
	}()
	p := reflect.ValueOf(dec).Elem().FieldByName("parser")
	if p.Kind() != reflect.Pointer || p.IsNil() {
		return 0, 0, false
	}
	state := p.Elem().FieldByName("parser") // yaml_parser_t
	if !state.IsValid() {
		return 0, 0, false
	}
	switch state.FieldByName("error").Int() {
	case yamlReaderError:
		return position(data, int(state.FieldByName("problem_offset").Int()))
	case yamlScannerError, yamlParserError:
		mark := state.FieldByName("problem_mark")
		return int(mark.FieldByName("line").Int()) + 1, int(mark.FieldByName("column").Int()) + 1, true
	}
	return 0, 0, false
}

// position is the line and column (from 1, in characters, as the YAML
// parser counts them) of the byte at offset in data.
func position(data []byte, offset int) (line, col int, ok bool) {
	if offset < 0 || offset > len(data) {
		return 0, 0, false
	}
	before := data[:offset]
	start := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte("\n")) + 1, utf8.RuneCount(before[start:]) + 1, true
}
