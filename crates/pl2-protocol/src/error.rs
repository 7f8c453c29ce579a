//! Errors: bad configurations at construction, and messages naming hosts the scheduler
//! does not know.

use crate::msg::{HostId, MsgId};

/// A configuration that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("invalid configuration: {0}")]
    Invalid(&'static str),
    #[error("host {host} maps to port {port}, but the switch has {ports} ports")]
    PortOutOfRange { host: HostId, port: u32, ports: u32 },
    #[error("port {port} is not on the switch, which has {ports} ports")]
    NoSuchPort { port: u32, ports: u32 },
}

/// A message the state machine cannot process.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    #[error("host {0} is not attached to this switch")]
    UnknownHost(HostId),
    #[error("message {0:?} is already being sent")]
    DuplicateMessage(MsgId),
    #[error("message {0:?} has more than 2^32 - 1 packets")]
    MessageTooLarge(MsgId),
}
