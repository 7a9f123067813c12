package study

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// CheckJSON makes sure b is one JSON value whose objects have no
// duplicate keys, with nothing after it but white space. encoding/json
// keeps the last of two equal keys and stops reading after the first
// value, so a file with "rate": 1 and "rate": 9, or two documents
// concatenated, would be read as something its writer did not write.
func CheckJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	// keys[i] are the keys seen in the i-th open object (nil: an array).
	var keys []map[string]bool
	var inKey []bool // whether the next token of the open object is a key
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if len(keys) > 0 {
				return errors.New("unexpected end of JSON input")
			}
			return errors.New("empty file: expected a JSON object")
		}
		if err != nil {
			return err
		}
		top := len(keys) - 1
		if top >= 0 && keys[top] != nil && inKey[top] {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				keys, inKey = keys[:top], inKey[:top]
			} else {
				k := tok.(string)
				if keys[top][k] {
					return fmt.Errorf("key %q appears twice in one object (at byte %d)", k, dec.InputOffset())
				}
				keys[top][k] = true
				inKey[top] = false
				continue
			}
		} else {
			switch tok {
			case json.Delim('{'):
				keys, inKey = append(keys, map[string]bool{}), append(inKey, true)
				continue
			case json.Delim('['):
				keys, inKey = append(keys, nil), append(inKey, false)
				continue
			case json.Delim(']'):
				keys, inKey = keys[:top], inKey[:top]
			}
		}
		// A value ended: the enclosing object expects a key next.
		if t := len(keys) - 1; t >= 0 && keys[t] != nil {
			inKey[t] = true
		}
		if len(keys) == 0 {
			break
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("data after the JSON value (at byte %d)", dec.InputOffset())
	}
	return nil
}
