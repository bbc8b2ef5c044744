package webcrawl

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/docindex/docindex/plugins"
)

// ErrPrivateAddress is wrapped by every refusal to connect to a private,
// loopback or link-local address.
var ErrPrivateAddress = errors.New("private network address refused")

// PrivateAddressError is the refusal to connect to Addr. It wraps
// ErrPrivateAddress and plugins.ErrInvalidArgument: retrying does not help,
// changing the configuration does.
type PrivateAddressError struct {
	// Addr is the address refused (after DNS resolution).
	Addr netip.Addr
	// Host is what was dialled (host:port), when known.
	Host string
}

func (e *PrivateAddressError) Error() string { return "refused to connect: " + e.reason() }

// reason says what was refused and how to allow it.
func (e *PrivateAddressError) reason() string {
	what := e.Addr.String()
	if e.Host != "" && e.Host != what {
		what = fmt.Sprintf("%s (%s)", e.Host, e.Addr)
	}
	return fmt.Sprintf("%s is a %s address; the crawler refuses private, loopback and link-local addresses "+
		`unless the source's configuration sets "allowPrivateNetworks": true`, what, addrKind(e.Addr))
}

func (e *PrivateAddressError) Is(target error) bool {
	return target == ErrPrivateAddress || target == plugins.ErrInvalidArgument
}

// Networks outside the public internet that the net/netip predicates do not
// cover.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (carrier-grade NAT)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
}

// Prefixes that embed an IPv4 address, which is checked in turn.
var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	nat64L  = netip.MustParsePrefix("64:ff9b:1::/48")
	teredoP = netip.MustParsePrefix("2001::/32")
)

// addrKind names the class of a non-public address ("" for a public one).
func addrKind(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "invalid"
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case a.Is6() && nat64.Contains(a):
		b := a.As16()
		return addrKind(netip.AddrFrom4([4]byte(b[12:16])))
	case a.Is6() && sixTo4.Contains(a):
		b := a.As16()
		return addrKind(netip.AddrFrom4([4]byte(b[2:6])))
	case a.Is6() && (nat64L.Contains(a) || teredoP.Contains(a)):
		return "reserved"
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return "reserved"
		}
	}
	return ""
}

// IsPublic reports whether a is an address of the public internet: not
// private, loopback, link-local, unspecified, multicast or reserved (IPv4
// addresses embedded in IPv6 ones are checked too).
func IsPublic(a netip.Addr) bool { return addrKind(a) == "" }

// guard decides which addresses a crawl may connect to.
type guard struct {
	// extra are networks allowed although not public (WithAllowedNetworks).
	extra []netip.Prefix
}

func (g guard) allowed(a netip.Addr) bool {
	a = a.Unmap()
	if IsPublic(a) {
		return true
	}
	for _, p := range g.extra {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// control is a net.Dialer Control function: it runs after DNS resolution,
// for every address the dialer tries, so that a host name resolving to a
// private address and a redirect to one are refused alike.
func (g guard) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("webcrawl: dial %q: %w", address, err)
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("webcrawl: dial %q: not an IP address: %w", address, err)
	}
	if !g.allowed(a) {
		return &PrivateAddressError{Addr: a.Unmap()}
	}
	return nil
}

// newTransport returns the HTTP transport of crawls with or without access
// to private networks.
func newTransport(g guard, allowPrivate bool) *http.Transport {
	d := &net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = g.control
	}
	return &http.Transport{
		// No proxy, even if the environment names one: through a proxy the
		// dialer would see the proxy's address, not the page's, and the
		// private-network check would be void.
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       60 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}
