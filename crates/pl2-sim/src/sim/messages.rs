//! The message table: one slot per live message (recycled, with a generation so stale
//! frames are recognised), and beside it the count of frames still out for messages of
//! transports that never resend.

use crate::workload::AppTag;
use super::Simulation;
use crate::engine::Ev;
use crate::metrics::MessageRecord;
use crate::transport::{MsgInfo, Protocol};

pub(crate) struct MsgSlot {
    pub gen: u16,
    pub live: bool,
    /// The transport carrying it.
    pub transport: u8,
    pub tag: AppTag,
    pub rec: MessageRecord,
}

/// The data frames of the message in a slot that are neither delivered nor dropped yet,
/// for a transport that never resends (`Protocol::frames_if_never_resent`). Kept apart
/// from [`MsgSlot`], in 8 bytes a slot, because every delivered frame updates it.
#[derive(Copy, Clone, Default)]
pub(crate) struct FrameCount {
    pub gen: u16,
    /// A data frame of the message was dropped.
    pub lost: bool,
    /// [`UNCOUNTED`] for a transport that may resend frames.
    pub left: u32,
}

/// `FrameCount::left` of a message whose transport may resend frames.
pub(crate) const UNCOUNTED: u32 = u32::MAX;

impl Simulation {
    /// Registers a new message arriving at its sending application now.
    /// `workload`: the index of the scenario's workload it comes from.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new_message(&mut self, src: u32, dst: u32, size: u64, thread: u16, prio: u8, transport: u8, workload: u16) -> u32 {
        let id = self.next_msg_id;
        self.next_msg_id += 1;
        self.counters.messages_created += 1;
        self.live_msgs += 1;
        let ideal = self.ideal_completion(src, dst, size, transport);
        let rec = MessageRecord { id, src, dst, size, thread, prio, transport, workload, start: self.now, finish: None, ideal, breakdown: None };
        let left = self.transport_mut(transport, src).frames_if_never_resent(size).unwrap_or(UNCOUNTED);
        let slot = match self.free_msgs.pop() {
            Some(slot) => {
                let m = &mut self.msgs[slot as usize];
                m.gen = m.gen.wrapping_add(1);
                m.live = true;
                m.transport = transport;
                m.tag = AppTag::None;
                m.rec = rec;
                slot
            }
            None => {
                self.msgs.push(MsgSlot { gen: 0, live: true, transport, tag: AppTag::None, rec });
                self.frame_counts.push(FrameCount::default());
                self.msgs.len() as u32 - 1
            }
        };
        self.frame_counts[slot as usize] = FrameCount { gen: self.msgs[slot as usize].gen, lost: false, left };
        slot
    }

    pub(crate) fn msg_info(&self, slot: u32) -> MsgInfo {
        let m = &self.msgs[slot as usize];
        MsgInfo {
            slot,
            gen: m.gen,
            id: m.rec.id,
            src: m.rec.src,
            dst: m.rec.dst,
            size: m.rec.size,
            thread: m.rec.thread,
            prio: m.rec.prio,
            start: m.rec.start,
        }
    }

    /// Message `slot` (of generation `gen`) reached its receiving application: records
    /// its finish and tells the application that sent it.
    pub(crate) fn finish_message(&mut self, slot: u32, gen: u16) {
        let m = &mut self.msgs[slot as usize];
        if !m.live || m.gen != gen {
            return;
        }
        m.rec.finish = Some(self.now);
        if let Some(c) = self.critical.filter(|c| c.0 == slot && c.1 == gen) {
            m.rec.breakdown = Some(Self::parts(m.rec.start, &c));
        }
        let (tag, ideal) = (m.tag, m.rec.ideal);
        self.close_message(slot);
        self.counters.messages_finished += 1;
        match tag {
            AppTag::None => {}
            // The stream's next message starts as an event of its own, not inside the
            // receiver's transport call that delivered this one.
            AppTag::Stream(i) => self.events.push(self.now, Ev::Stream(i)),
            _ => self.app_delivered(tag, ideal),
        }
    }

    /// A data frame of message `slot` was delivered (after its transport saw it) or
    /// dropped. For a transport that never resends, a message with a dropped frame is over
    /// once none of its frames is left: it is reported unfinished now, as it would be at
    /// the end, and its slot freed, so a long lossy run does not keep every lost message.
    pub(crate) fn settle_frame(&mut self, slot: u32, gen: u16, dropped: bool) {
        let Some(c) = self.frame_counts.get_mut(slot as usize) else { return };
        if c.gen != gen || c.left == UNCOUNTED || c.left == 0 {
            return;
        }
        c.left -= 1;
        c.lost |= dropped;
        if c.left > 0 || !c.lost {
            return;
        }
        let m = &self.msgs[slot as usize];
        if m.live && m.gen == gen {
            self.close_message(slot);
            self.counters.messages_lost += 1;
        }
    }

    /// Writes the record of the live message in `slot`, finished or given up, and frees
    /// the slot.
    pub(crate) fn close_message(&mut self, slot: u32) {
        let m = &mut self.msgs[slot as usize];
        m.live = false;
        self.records.messages.push(m.rec.clone());
        self.free_msgs.push(slot);
        self.live_msgs -= 1;
    }
}
