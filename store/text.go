package store

import (
	"reflect"
	"strings"
	"unicode/utf8"
)

// ValidText refuses a value that is not valid UTF-8, the one rule for every text a write takes (CLI
// arguments and files, MCP arguments, imports): the branch's markdown, YAML and JSON cannot carry other
// bytes (a JSON encoder would replace them with U+FFFD, YAML would store them as base64), so they are
// refused rather than changed. field names the value in the error, which wraps ErrInvalid and gives the
// offset of the first bad byte.
func ValidText(field, s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	return invalidf("%s is not valid UTF-8 text (byte 0x%02X at offset %d): ctx stores text only; convert it to UTF-8 first", field, s[i], i)
}

// validFields applies ValidText to every string of v (a struct, or a pointer to one): string fields,
// pointers to strings, slices and maps of strings, nested structs. Fields are named what.<json name>.
func validFields(what string, v any) error {
	return validValue(what, reflect.ValueOf(v))
}

func validValue(name string, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return validValue(name, v.Elem())
	case reflect.String:
		return ValidText(name, v.String())
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if !utf8.Valid(v.Bytes()) {
				return ValidText(name, string(v.Bytes()))
			}
			return nil
		}
		for i := 0; i < v.Len(); i++ {
			if err := validValue(name, v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			if err := validValue(name+" key", it.Key()); err != nil {
				return err
			}
			if err := validValue(name, it.Value()); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			n := f.Name
			if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" && tag != "-" {
				n = tag
			}
			if f.Anonymous {
				n = ""
			}
			sub := name
			if n != "" {
				sub = name + " " + strings.ToLower(n)
			}
			if err := validValue(sub, v.Field(i)); err != nil {
				return err
			}
		}
	}
	return nil
}
