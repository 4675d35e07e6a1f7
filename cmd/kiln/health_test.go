package main

import "testing"

func TestDefaultHealthURL(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"", "http://127.0.0.1:8420/health"},
		{"0.0.0.0:8420", "http://127.0.0.1:8420/health"},
		{"[::]:9000", "http://127.0.0.1:9000/health"},
		{":8421", "http://127.0.0.1:8421/health"},
		{"127.0.0.1:8420", "http://127.0.0.1:8420/health"},
		{"10.1.2.3:80", "http://10.1.2.3:80/health"},
		{"[::1]:8420", "http://[::1]:8420/health"},
		{"kiln.internal:8420", "http://kiln.internal:8420/health"},
	} {
		if got := defaultHealthURL(tc.addr); got != tc.want {
			t.Errorf("defaultHealthURL(%q) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
