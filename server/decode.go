package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"

	"github.com/kiln-ai/kiln/server/wire"
)

// decodeStrict decodes the request body as exactly one JSON object into v:
// unknown fields, fields of the wrong type and trailing data are a 400.
// emptyOK accepts an empty body.
func decodeStrict(r *http.Request, v any, emptyOK bool) error {
	data, err := requestBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		if emptyOK {
			return nil
		}
		return wire.Invalid("", "invalid_json", "the request body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); !errors.Is(terr, io.EOF) {
			return wire.Invalid("", "invalid_json", "the request body holds more than one JSON value")
		}
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return wire.Invalid("", "invalid_json", "the request body must be a JSON object")
		}
		return wire.Invalid(te.Field, "invalid_type", "'%s' must be a JSON %s, got %s", wire.Clip(te.Field), goJSONType(te.Type.Kind().String()), te.Value)
	}
	if field, ok := unknownField(err); ok {
		if path, ok := unknownFieldPath(data, reflect.TypeOf(v)); ok {
			field = path
		}
		return wire.Invalid(field, "unknown_field", "unknown field %q", wire.Clip(field))
	}
	return wire.Invalid("", "invalid_json", "the request body is not a JSON object: %v", wire.Clip(err.Error()))
}

// unknownField reads the field name of encoding/json's unknown-field error.
func unknownField(err error) (string, bool) {
	var name string
	if _, serr := fmt.Sscanf(err.Error(), "json: unknown field %q", &name); serr == nil {
		return name, true
	}
	return "", false
}

// unknownFieldPath finds the first member of data that t (a pointer to a
// struct) has no field for, and returns its path as the error's param
// names fields ("config.n_epochs", "examples[0].messages[1].x"):
// encoding/json names only the member.
func unknownFieldPath(data []byte, t reflect.Type) (string, bool) {
	var doc any
	if json.Unmarshal(data, &doc) != nil {
		return "", false
	}
	return walkUnknown(doc, t, "")
}

func walkUnknown(doc any, t reflect.Type, path string) (string, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return "", false // decodes itself: its members are its own business
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			return "", false
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sub := join(path, k)
			f, ok := jsonField(t, k)
			if !ok {
				return sub, true
			}
			if p, ok := walkUnknown(obj[k], f.Type, sub); ok {
				return p, true
			}
		}
	case reflect.Slice, reflect.Array:
		arr, _ := doc.([]any)
		for i, e := range arr {
			if p, ok := walkUnknown(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
	}
	return "", false
}

// jsonField is the field of struct t that JSON member k decodes into,
// matched as encoding/json matches (case-insensitively).
func jsonField(t reflect.Type, k string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			if g, ok := jsonField(f.Type, k); ok {
				return g, true
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.EqualFold(name, k) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// goJSONType names a Go kind as a JSON type.
func goJSONType(kind string) string {
	switch kind {
	case "ptr", "string":
		return "string"
	case "struct", "map":
		return "object"
	}
	return kind
}
