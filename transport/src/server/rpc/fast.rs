//! The send fast path: `message/send`, `message/stream` (0.3) and `SendMessage`,
//! `SendStreamingMessage` (1.0) typed straight from the bytes, in one pass.
//!
//! The body is read member by member. When `method` comes before `params`, as every
//! client writes it, the params are typed as they are read; otherwise they are kept
//! as raw text and typed once `method` is known. (A first version kept the params as
//! raw text always: scanning them to find their end cost a fifth of the decoding.)

use serde::Deserializer as _;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::a2a::v1::{self, ProtocolVersion};
use crate::jsonrpc::{A2aCall, A2aRequest, JsonRpcVersion, RequestId, method};

/// What the fast path makes of a send: its wire form, its method and the call.
pub(super) type Decoded = (ProtocolVersion, Option<&'static str>, A2aCall);

/// A plain, valid send typed from `body`; `None` for anything else (a wrong
/// `jsonrpc`, a missing or `null` id, params that are not an object or do not type,
/// a member named twice, another method): the full decoder then answers it, with the
/// error it names.
pub(super) fn decode_send(body: &[u8]) -> Option<Decoded> {
    let mut reader = serde_json::Deserializer::from_slice(body);
    let decoded = (&mut reader).deserialize_map(Envelope).ok()?;
    reader.end().ok()?;
    Some(decoded)
}

/// The sends the fast path types, by their wire name.
fn send_method(name: &str) -> Option<(ProtocolVersion, &'static str)> {
    match name {
        method::SEND_MESSAGE => Some((ProtocolVersion::V0_3, method::SEND_MESSAGE)),
        method::SEND_STREAMING_MESSAGE => {
            Some((ProtocolVersion::V0_3, method::SEND_STREAMING_MESSAGE))
        }
        v1::method::SEND_MESSAGE => Some((ProtocolVersion::V1_0, v1::method::SEND_MESSAGE)),
        v1::method::SEND_STREAMING_MESSAGE => {
            Some((ProtocolVersion::V1_0, v1::method::SEND_STREAMING_MESSAGE))
        }
        _ => None,
    }
}

/// The envelope's members; any other is read past, as the full decoder ignores it.
#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    #[serde(other)]
    Other,
}

/// Reads the whole envelope.
struct Envelope;

impl<'de> Visitor<'de> for Envelope {
    type Value = Decoded;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC call")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Decoded, A::Error> {
        let mut jsonrpc = false;
        let mut id = None;
        let mut called: Option<(ProtocolVersion, &'static str)> = None;
        // The params as read: typed, or kept as text until `method` names their type.
        let mut typed: Option<A2aRequest> = None;
        let mut raw: Option<&'de RawValue> = None;
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Jsonrpc if !jsonrpc => {
                    // Refuses anything but "2.0" itself.
                    map.next_value::<JsonRpcVersion>()?;
                    jsonrpc = true;
                }
                Member::Id if id.is_none() => id = Some(map.next_value::<RequestId>()?),
                Member::Method if called.is_none() => {
                    let name = map.next_value::<&'de str>()?;
                    called =
                        Some(send_method(name).ok_or_else(|| de::Error::custom("not a send"))?);
                }
                Member::Params if typed.is_none() && raw.is_none() => match called {
                    Some((_, name)) => typed = Some(map.next_value_seed(Typed(name))?),
                    None => raw = Some(map.next_value::<&'de RawValue>()?),
                },
                Member::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
                // Named twice: the full decoder keeps the last; this path does not guess.
                _ => return Err(de::Error::custom("a member named twice")),
            }
        }
        let (Some(id), Some((version, name)), true) = (id, called, jsonrpc) else {
            return Err(de::Error::custom("a member is missing"));
        };
        if matches!(id, RequestId::Null) {
            return Err(de::Error::custom("a null id"));
        }
        let request = match (typed, raw) {
            (Some(request), _) => request,
            (None, Some(raw)) => {
                let mut reader = serde_json::Deserializer::from_str(raw.get());
                let request = Typed(name)
                    .deserialize(&mut reader)
                    .map_err(de::Error::custom)?;
                reader.end().map_err(de::Error::custom)?;
                request
            }
            (None, None) => return Err(de::Error::custom("no params")),
        };
        Ok((version, Some(name), A2aCall::new(id, request)))
    }
}

/// The params of the send `method`, typed from an object (never an array, which serde
/// would also type a struct from: the full decoder wants an object).
struct Typed(&'static str);

impl<'de> DeserializeSeed<'de> for Typed {
    type Value = A2aRequest;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<A2aRequest, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Typed {
    type Value = A2aRequest;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the params of a send, as an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<A2aRequest, A::Error> {
        use serde::Deserialize as _;
        let object = de::value::MapAccessDeserializer::new(map);
        match self.0 {
            method::SEND_MESSAGE => {
                serde::Deserialize::deserialize(object).map(A2aRequest::SendMessage)
            }
            method::SEND_STREAMING_MESSAGE => {
                serde::Deserialize::deserialize(object).map(A2aRequest::SendStreamingMessage)
            }
            v1::method::SEND_MESSAGE => {
                let params = v1::SendMessageRequest::deserialize(object)?;
                A2aRequest::try_from(v1::Request::SendMessage(params)).map_err(de::Error::custom)
            }
            _ => {
                let params = v1::SendMessageRequest::deserialize(object)?;
                A2aRequest::try_from(v1::Request::SendStreamingMessage(params))
                    .map_err(de::Error::custom)
            }
        }
    }
}
