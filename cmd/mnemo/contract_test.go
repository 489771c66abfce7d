package main_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mnemo-dev/mnemo/adapters/claudecode"
	"github.com/mnemo-dev/mnemo/memory"
)

// The hook cannot link the memory package (it must start in a millisecond
// or two), so it writes its own params. Every field it sends must be one
// the daemon reads, under the same name and type, and what the daemon
// answers to SessionStart must fill the hook's result.
func TestHookParamsMatchTheDaemon(t *testing.T) {
	pairs := []struct {
		hook, daemon any
	}{
		{&claudecode.SessionStartParams{}, &memory.SessionStartParams{}},
		{&claudecode.UserPromptParams{}, &memory.UserPromptParams{}},
		{&claudecode.ToolUseParams{}, &memory.ToolUseParams{}},
		{&claudecode.StopParams{}, &memory.StopParams{}},
		{&claudecode.SessionEndParams{}, &memory.SessionEndParams{}},
		{&memory.ContextResult{}, &claudecode.SessionStartResult{}},
	}
	for _, p := range pairs {
		t.Run(reflect.TypeOf(p.hook).Elem().Name(), func(t *testing.T) {
			fill(reflect.ValueOf(p.hook).Elem())
			b, err := json.Marshal(p.hook)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			if err := dec.Decode(p.daemon); err != nil {
				t.Fatalf("%s does not decode into %T: %v", b, p.daemon, err)
			}
			back, _ := json.Marshal(p.daemon)
			var sent, got map[string]any
			json.Unmarshal(b, &sent)
			json.Unmarshal(back, &got)
			for k, v := range sent {
				if !reflect.DeepEqual(got[k], v) {
					t.Errorf("field %s: sent %v, the other side read %v", k, v, got[k])
				}
			}
		})
	}
}

// fill sets every field of a struct to a value that is not its zero.
func fill(v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x-" + v.Type().Field(i).Name)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Uint64:
			f.SetUint(uint64(i + 1))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			if f.Type() == reflect.TypeOf(json.RawMessage(nil)) {
				f.SetBytes([]byte(`{"k":1}`))
			} else if f.Type().Elem().Kind() == reflect.Uint64 {
				f.Set(reflect.ValueOf([]uint64{7, 8}))
			}
		}
	}
}
