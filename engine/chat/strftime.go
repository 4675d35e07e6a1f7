package chat

import (
	"strconv"
	"strings"
	"time"
)

// strftime formats t as Python's time.strftime does with the C locale, for
// the directives chat templates use (Llama 3.x: strftime_now("%d %b %Y")).
// A "-" after "%" drops the zero padding (glibc, as Python on Linux). An
// unknown directive is kept as written.
func strftime(format string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		start := i
		i++
		pad := true
		if format[i] == '-' && i+1 < len(format) {
			pad = false
			i++
		}
		if !writeDirective(&b, format[i], pad, t) {
			b.WriteString(format[start : i+1])
		}
	}
	return b.String()
}

// writeDirective writes one strftime directive, reporting whether d is one.
func writeDirective(b *strings.Builder, d byte, pad bool, t time.Time) bool {
	num := func(v, width int) {
		s := strconv.Itoa(v)
		if pad {
			for n := len(s); n < width; n++ {
				b.WriteByte('0')
			}
		}
		b.WriteString(s)
	}
	hour12 := t.Hour() % 12
	if hour12 == 0 {
		hour12 = 12
	}
	switch d {
	case 'Y':
		num(t.Year(), 4)
	case 'y':
		num(t.Year()%100, 2)
	case 'm':
		num(int(t.Month()), 2)
	case 'd':
		num(t.Day(), 2)
	case 'e':
		if pad && t.Day() < 10 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(t.Day()))
	case 'j':
		num(t.YearDay(), 3)
	case 'H':
		num(t.Hour(), 2)
	case 'I':
		num(hour12, 2)
	case 'M':
		num(t.Minute(), 2)
	case 'S':
		num(t.Second(), 2)
	case 'p':
		b.WriteString(t.Format("PM"))
	case 'b':
		b.WriteString(t.Month().String()[:3])
	case 'B':
		b.WriteString(t.Month().String())
	case 'a':
		b.WriteString(t.Weekday().String()[:3])
	case 'A':
		b.WriteString(t.Weekday().String())
	case 'Z':
		b.WriteString(t.Format("MST"))
	case 'z':
		b.WriteString(t.Format("-0700"))
	case '%':
		b.WriteByte('%')
	default:
		return false
	}
	return true
}
