package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// ErrArguments marks tool arguments that do not fit the tool's schema; the
// error's text names the argument and says what was expected.
var ErrArguments = errors.New("invalid arguments")

// inputSchema infers the schema of a tool's input from T (names from json
// tags, descriptions from jsonschema tags; fields without omitempty are
// required), makes slices plain arrays (a null argument counts as absent,
// see decodeArgs), and lets tune set ranges and other details.
func inputSchema[T any](tune func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: input schema of %T: %v", *new(T), err))
	}
	for _, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Types, p.Type = nil, p.Types[1]
		}
	}
	if tune != nil {
		tune(s.Properties)
	}
	return s
}

// outputSchema infers the schema of a tool's structured result from T,
// kept to its top level: each property and its type, not the shape of a
// whole record. The tool list goes into every session's context, and
// get_observations' full schema alone was 2.9 KB of its 13.4; the result
// itself is what the model reads.
func outputSchema[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: output schema of %T: %v", *new(T), err))
	}
	for name, p := range s.Properties {
		s.Properties[name] = &jsonschema.Schema{Type: p.Type, Types: p.Types}
	}
	return s
}

// decodeArgs checks a tool call's raw arguments against the tool's schema
// and decodes them into in. Null arguments count as absent. The error
// matches ErrArguments and names the first problem in words an agent can
// act on; resolved (the same schema, resolved) is a final check for
// keywords the words do not cover.
func decodeArgs(raw json.RawMessage, s *jsonschema.Schema, resolved *jsonschema.Resolved, in any) error {
	args := map[string]any{}
	if t := bytes.TrimSpace(raw); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(t))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%w: the arguments are not JSON: %v", ErrArguments, err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: the arguments must be a JSON object, got %s", ErrArguments, describeValue(v))
		}
		args = obj
	}
	maps.DeleteFunc(args, func(_ string, v any) bool { return v == nil })
	if err := checkObject(args, s); err != nil {
		return fmt.Errorf("%w: %v", ErrArguments, err)
	}
	clean, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrArguments, err)
	}
	var plain any
	if err := json.Unmarshal(clean, &plain); err != nil {
		return fmt.Errorf("%w: %v", ErrArguments, err)
	}
	if err := resolved.Validate(plain); err != nil {
		return fmt.Errorf("%w: %v", ErrArguments, err)
	}
	if err := json.Unmarshal(clean, in); err != nil {
		return fmt.Errorf("%w: %v", ErrArguments, err)
	}
	return nil
}

func checkObject(args map[string]any, s *jsonschema.Schema) error {
	names := slices.Sorted(maps.Keys(s.Properties))
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if _, ok := s.Properties[k]; !ok {
			return fmt.Errorf("unknown argument %q; this tool takes %s", k, argList(s, names))
		}
	}
	for _, k := range s.Required {
		if _, ok := args[k]; !ok {
			return fmt.Errorf("missing required argument %q (%s)", k, describeSchema(s.Properties[k]))
		}
	}
	for _, k := range names {
		if v, ok := args[k]; ok {
			if err := checkValue(fmt.Sprintf("argument %q", k), v, s.Properties[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

func argList(s *jsonschema.Schema, names []string) string {
	var parts []string
	for _, n := range names {
		if slices.Contains(s.Required, n) {
			n += " (required)"
		}
		parts = append(parts, n)
	}
	return strings.Join(parts, ", ")
}

// checkValue checks v against the keywords our schemas use: type(s),
// minimum/maximum, minLength/maxLength, minItems/maxItems and items.
func checkValue(where string, v any, s *jsonschema.Schema) error {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	got := jsonType(v)
	if len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return t == got || t == "number" && got == "integer" }) {
		return fmt.Errorf("%s: got %s, want %s", where, describeValue(v), describeSchema(s))
	}
	switch got {
	case "integer", "number":
		f, _ := v.(json.Number).Float64()
		if s.Minimum != nil && f < *s.Minimum {
			return fmt.Errorf("%s: %v is too small, want %s", where, v, describeSchema(s))
		}
		if s.Maximum != nil && f > *s.Maximum {
			return fmt.Errorf("%s: %v is too large, want %s", where, v, describeSchema(s))
		}
	case "string":
		n := len([]rune(v.(string)))
		if s.MinLength != nil && n < *s.MinLength {
			if strings.TrimSpace(v.(string)) == "" {
				return fmt.Errorf("%s: must not be empty", where)
			}
			return fmt.Errorf("%s: too short, want at least %d characters", where, *s.MinLength)
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			return fmt.Errorf("%s: too long (%d characters), want at most %d", where, n, *s.MaxLength)
		}
	case "array":
		items := v.([]any)
		if s.MinItems != nil && len(items) < *s.MinItems {
			return fmt.Errorf("%s: got %d items, want at least %d", where, len(items), *s.MinItems)
		}
		if s.MaxItems != nil && len(items) > *s.MaxItems {
			return fmt.Errorf("%s: got %d items, want at most %d; split the call", where, len(items), *s.MaxItems)
		}
		if s.Items != nil {
			for i, it := range items {
				if err := checkValue(fmt.Sprintf("%s item %d", where, i+1), it, s.Items); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// jsonType is the JSON schema type of a value decoded with UseNumber.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		if _, err := strconv.ParseInt(v.String(), 10, 64); err == nil {
			return "integer"
		}
		if _, err := strconv.ParseUint(v.String(), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	default:
		return "object"
	}
}

// describeValue says what kind of value v is, with a short preview.
func describeValue(v any) string {
	b, _ := json.Marshal(v)
	preview := string(b)
	if r := []rune(preview); len(r) > 40 {
		preview = string(r[:40]) + "…"
	}
	return fmt.Sprintf("%s %s", article(jsonType(v)), preview)
}

// describeSchema says in words what a schema accepts, e.g. "an array of
// integers (1 to 50 items)" or "an integer from 1 to 100".
func describeSchema(s *jsonschema.Schema) string {
	if s == nil {
		return "a value"
	}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	var words []string
	for _, t := range types {
		switch {
		case t == "array" && s.Items != nil:
			w := "an array of " + plural(s.Items)
			if s.MinItems != nil && s.MaxItems != nil {
				w += fmt.Sprintf(" (%d to %d items)", *s.MinItems, *s.MaxItems)
			}
			words = append(words, w)
		case (t == "integer" || t == "number") && (s.Minimum != nil || s.Maximum != nil):
			w := article(t)
			switch {
			case s.Minimum != nil && s.Maximum != nil:
				w += fmt.Sprintf(" from %g to %g", *s.Minimum, *s.Maximum)
			case s.Minimum != nil:
				w += fmt.Sprintf(" of at least %g", *s.Minimum)
			default:
				w += fmt.Sprintf(" of at most %g", *s.Maximum)
			}
			words = append(words, w)
		case t == "string" && s.MinLength != nil && *s.MinLength > 0:
			words = append(words, "a non-empty string")
		default:
			words = append(words, article(t))
		}
	}
	if len(words) == 0 {
		return "any value"
	}
	return strings.Join(words, " or ")
}

func plural(s *jsonschema.Schema) string {
	t := s.Type
	if t == "" && len(s.Types) > 0 {
		t = s.Types[0]
	}
	switch t {
	case "":
		return "values"
	case "string", "integer", "number", "object", "array":
		w := t + "s"
		if t == "string" && s.MinLength != nil && *s.MinLength > 0 {
			w = "non-empty strings"
		}
		return w
	case "boolean":
		return "booleans"
	}
	return t + " values"
}

func article(t string) string {
	switch t {
	case "integer", "array", "object":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}
