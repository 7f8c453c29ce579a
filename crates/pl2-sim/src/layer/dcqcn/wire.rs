//! How a DCQCN notification reaches the layer, whatever transport runs over it: the
//! notification point (the receiving transport: RoCE's receiver) either sends a CNP frame
//! or sets a flag on an acknowledgement. A transport over this layer leaves these bits
//! to it.
//!
//! | signal | kind | fields |
//! |--------|------|--------|
//! | CNP frame | `Control` | `msg`/`msg_gen` = the flow's message slot/generation; `aux` bits 56-63 = 3 |
//! | CNP on an acknowledgement | `Ack` | `msg`/`msg_gen` as above; `aux` bit 48 set |

use crate::packet::{Packet, PktKind};

/// Where a frame's type sits in `aux` (bits 56-63).
pub const TYPE_SHIFT: u32 = 56;
/// `aux` type of a CNP frame.
pub const CNP_TYPE: u64 = 3;
/// `aux` bit of an acknowledgement that carries a CNP.
pub const CNP_FLAG: u64 = 1 << 48;

/// `p` is a CNP frame (consumed by the layer).
pub fn is_cnp_frame(p: &Packet) -> bool {
    p.kind == PktKind::Control && p.aux >> TYPE_SHIFT == CNP_TYPE
}

/// `p` is an acknowledgement carrying a CNP (read by the layer, then passed on).
pub fn carries_cnp(p: &Packet) -> bool {
    p.kind == PktKind::Ack && p.aux & CNP_FLAG != 0
}
