package webcrawl_test

import (
	"net/netip"
	"testing"

	"github.com/docindex/docindex/connectors/webcrawl"
)

func TestIsPublic(t *testing.T) {
	private := []string{
		"127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", // cloud metadata services
		"0.0.0.0", "0.1.2.3", "100.64.0.1", "192.0.0.8", "198.18.0.1", "255.255.255.255", "224.0.0.1",
		"::", "::1", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "fec0::1",
		"::ffff:127.0.0.1", "::ffff:10.0.0.1", // IPv4-mapped
		"64:ff9b::7f00:1", "64:ff9b::a00:1", // NAT64 of 127.0.0.1 and 10.0.0.1
		"2002:7f00:1::1", // 6to4 of 127.0.0.1
	}
	public := []string{"8.8.8.8", "1.1.1.1", "93.184.215.14", "172.32.0.1", "2606:4700:4700::1111",
		"2a00:1450:4001:82b::200e", "64:ff9b::808:808", "::ffff:8.8.8.8"}
	for _, s := range private {
		if webcrawl.IsPublic(netip.MustParseAddr(s)) {
			t.Errorf("%s counted as public", s)
		}
	}
	for _, s := range public {
		if !webcrawl.IsPublic(netip.MustParseAddr(s)) {
			t.Errorf("%s counted as not public", s)
		}
	}
}
