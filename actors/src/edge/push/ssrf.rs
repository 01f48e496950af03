//! Which webhook addresses the edge may call: the guard against server-side request
//! forgery.
//!
//! A webhook URL comes from a client, and the edge POSTs to it from inside the
//! operator's network; without a guard a client could make the edge call the cloud
//! metadata service or an internal admin port. So every address a webhook host
//! resolves to is classified, and only public unicast addresses pass unless the
//! operator allows more ([`PushConfig`](crate::edge::PushConfig)).
//!
//! When a config is set, only what needs no DNS is checked: the URL's form and an
//! IP-literal host's address (the client gets -32602 naming the URL and, for an
//! address the operator could allow, the key that allows it). A host name is resolved
//! at every delivery, inside the HTTP client's DNS resolver ([`GuardedResolver`]),
//! which hands the client only the addresses it allowed: the addresses checked are the
//! ones connected to, so a host whose DNS changes between check and connect (DNS
//! rebinding) is still refused. Redirects and proxies are off in the client for the
//! same reason. A set never waits on DNS, and a host that does not resolve yet is a
//! delivery failure (retried, then reported), not a refused config.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::edge::{EdgeError, PushConfig};

/// What kind of address an IP is, for the webhook rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AddressClass {
    /// A public unicast address: always allowed.
    Public,
    /// Loopback or unspecified (which reaches the local host too).
    Loopback,
    /// Private, shared (CGNAT), link-local, unique-local or benchmarking ranges.
    Private,
    /// A cloud metadata endpoint: refused unless its host is listed explicitly.
    Metadata,
    /// Multicast, broadcast or reserved: never a webhook.
    NotUnicast,
}

impl AddressClass {
    fn describe(self) -> &'static str {
        match self {
            Self::Public => "a public address",
            Self::Loopback => "a loopback address",
            Self::Private => "a private-network address",
            Self::Metadata => "a cloud metadata address",
            Self::NotUnicast => "not a unicast address",
        }
    }
}

/// Classifies an IP address.
pub(crate) fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    let [a, b, c, _] = ip.octets();
    if ip == Ipv4Addr::new(169, 254, 169, 254) || ip == Ipv4Addr::new(100, 100, 100, 200) {
        // AWS/GCP/Azure and Alibaba metadata services.
        return AddressClass::Metadata;
    }
    if ip.is_loopback() || a == 0 {
        // 0.0.0.0/8 connects to the local host on Linux.
        return AddressClass::Loopback;
    }
    if ip.is_multicast() || ip.is_broadcast() || a >= 240 {
        return AddressClass::NotUnicast;
    }
    let shared = a == 100 && (64..128).contains(&b);
    let benchmarking = a == 198 && (b == 18 || b == 19);
    let protocol_assignments = a == 192 && b == 0 && c == 0;
    if ip.is_private() || ip.is_link_local() || shared || benchmarking || protocol_assignments {
        return AddressClass::Private;
    }
    AddressClass::Public
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    if let Some(v4) = embedded_v4(ip) {
        return classify_v4(v4);
    }
    let first = ip.segments()[0];
    if ip == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254) {
        // AWS's IPv6 metadata service.
        return AddressClass::Metadata;
    }
    if ip.is_loopback() || ip.is_unspecified() {
        return AddressClass::Loopback;
    }
    if ip.is_multicast() {
        return AddressClass::NotUnicast;
    }
    // Unique-local fc00::/7, link-local fe80::/10, deprecated site-local fec0::/10.
    if (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80 || (first & 0xffc0) == 0xfec0 {
        return AddressClass::Private;
    }
    AddressClass::Public
}

/// The IPv4 address an IPv6 address stands for, for the forms that reach an IPv4 host:
/// IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64
/// (`64:ff9b::a.b.c.d`) and 6to4 (`2002:AABB:CCDD::`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let low = Ipv4Addr::new(
        (s[6] >> 8) as u8,
        (s[6] & 0xff) as u8,
        (s[7] >> 8) as u8,
        (s[7] & 0xff) as u8,
    );
    if s[..6] == [0, 0, 0, 0, 0, 0] && !ip.is_loopback() && !ip.is_unspecified() {
        return Some(low);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(low);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            (s[1] & 0xff) as u8,
            (s[2] >> 8) as u8,
            (s[2] & 0xff) as u8,
        ));
    }
    None
}

/// An address refused by the guard; found in a delivery error's source chain to tell
/// a refusal (not worth retrying) from a network failure.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Refused(pub(crate) String);

/// The operator's webhook address rules.
#[derive(Debug, Clone)]
pub(crate) struct WebhookGuard {
    allow_loopback: bool,
    allow_private: bool,
    /// Lower-cased host names and IP literals exempt from the checks.
    allowed_hosts: Vec<String>,
}

impl WebhookGuard {
    pub(crate) fn new(config: &PushConfig) -> Self {
        Self {
            allow_loopback: config.allow_loopback,
            allow_private: config.allow_private_networks,
            allowed_hosts: config
                .allowed_hosts
                .iter()
                .map(|host| normalize_host(host))
                .collect(),
        }
    }

    fn is_allowed_host(&self, host: &str) -> bool {
        let host = normalize_host(host);
        self.allowed_hosts.contains(&host)
    }

    /// Why `ip` is refused, or `None` if it is allowed.
    pub(crate) fn refusal(&self, ip: IpAddr) -> Option<String> {
        let class = classify(ip);
        let allowed = match class {
            AddressClass::Public => true,
            AddressClass::Loopback => self.allow_loopback,
            AddressClass::Private => self.allow_private,
            AddressClass::Metadata | AddressClass::NotUnicast => false,
        };
        (!allowed).then(|| {
            let hint = match class {
                AddressClass::Loopback | AddressClass::Private => {
                    "; allowed only with `push.allow_private_addresses = true` in the config \
                     file (`PushConfig::allow_loopback`/`allow_private_networks` in the library)"
                }
                _ => "",
            };
            format!("{ip} is {}{hint}", class.describe())
        })
    }

    /// Parses a webhook URL and checks what can be checked without DNS: the scheme,
    /// the host, no credentials in the URL, and an IP-literal host's address.
    ///
    /// # Errors
    /// [`EdgeError::InvalidWebhookUrl`] or [`EdgeError::WebhookRefused`], naming the URL.
    pub(crate) fn parse(&self, raw: &str) -> Result<Url, EdgeError> {
        let invalid = |reason: &str| EdgeError::InvalidWebhookUrl {
            url: raw.to_owned(),
            reason: reason.to_owned(),
        };
        let url = Url::parse(raw).map_err(|error| invalid(&error.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid("the scheme must be http or https"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid(
                "credentials do not belong in the URL; use `authentication`",
            ));
        }
        let host = url.host_str().ok_or_else(|| invalid("it has no host"))?;
        if self.is_allowed_host(host) {
            return Ok(url);
        }
        if let Some(ip) = ip_literal(host)
            && let Some(reason) = self.refusal(ip)
        {
            return Err(EdgeError::WebhookRefused {
                url: raw.to_owned(),
                reason,
            });
        }
        Ok(url)
    }
}

/// The address of an IP-literal host (`127.0.0.1`, `[::1]`); `None` for a name.
fn ip_literal(host: &str) -> Option<IpAddr> {
    normalize_host(host).parse().ok()
}

/// Lower case, without the brackets of an IPv6 literal or a trailing dot.
fn normalize_host(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
        .to_ascii_lowercase()
}

/// The push client's DNS resolver: the system resolver, keeping only the addresses the
/// guard allows, so a delivery connects only where a check just said it may.
#[derive(Debug, Clone)]
pub(crate) struct GuardedResolver {
    guard: Arc<WebhookGuard>,
}

impl GuardedResolver {
    pub(crate) fn new(guard: Arc<WebhookGuard>) -> Self {
        Self { guard }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let guard = Arc::clone(&self.guard);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let resolved: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if guard.is_allowed_host(&host) {
                return Ok(Box::new(resolved.into_iter()) as Addrs);
            }
            let mut refusals = Vec::new();
            let allowed: Vec<SocketAddr> = resolved
                .into_iter()
                .filter(|addr| match guard.refusal(addr.ip()) {
                    Some(reason) => {
                        refusals.push(reason);
                        false
                    }
                    None => true,
                })
                .collect();
            if allowed.is_empty() {
                let reason = if refusals.is_empty() {
                    format!("host `{host}` resolves to no address")
                } else {
                    format!("host `{host}` resolves to {}", refusals.join(", "))
                };
                return Err(Box::new(Refused(reason)) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}
