//! The list of switch programs: one line each, from which `switch_programs!` generates
//! the closed enum [`SwitchProgram`] a switch runs and its static dispatch. A program
//! implements [`SwitchLogic`] (its per-frame hooks, and whether it wants the dequeue hook)
//! and [`Program`] (its counters); a module installs it ([`crate::transport::Transport::install`]).

use crate::metrics::Counters;
use crate::net::program::{ProgramIo, SwitchLogic, Verdict};
use crate::packet::Packet;
use crate::transport::ModuleStats;
use crate::units::SimTime;

/// A switch program in the list: its hooks and the counters it reports.
pub trait Program: SwitchLogic {
    /// Adds its counters to the run's; `counters` are the simulation's (e.g. its drops).
    /// Default: nothing to report.
    fn report(&self, _stats: &mut ModuleStats, _counters: &Counters) {}
}

/// `switch_programs! { /// doc \n Variant(path::Type), ... }`: generates [`SwitchProgram`]
/// with plain forwarding as its default and one boxed variant per program.
macro_rules! switch_programs {
    ($( $(#[$doc:meta])* $variant:ident($ty:ty) ),+ $(,)?) => {
        /// Every switch program pl2 has.
        #[derive(Default)]
        pub enum SwitchProgram {
            /// Plain forwarding.
            #[default]
            Forward,
            $( $(#[$doc])* $variant(Box<$ty>), )+
        }

        impl SwitchProgram {
            /// A frame left the switch's input pipeline (see [`SwitchLogic::on_ingress`]).
            #[inline]
            pub fn on_ingress(&mut self, io: &mut ProgramIo<'_>, pkt: &mut Packet) -> Verdict {
                match self {
                    SwitchProgram::Forward => Verdict::Forward,
                    $( SwitchProgram::$variant(p) => p.on_ingress(io, pkt), )+
                }
            }
            /// Whether this is plain forwarding (no program).
            #[inline]
            pub fn is_forward(&self) -> bool {
                matches!(self, SwitchProgram::Forward)
            }
            /// Whether the program asked for [`SwitchProgram::on_dequeue`]
            /// ([`SwitchLogic::ON_DEQUEUE`]).
            #[inline]
            pub fn wants_dequeue(&self) -> bool {
                match self {
                    SwitchProgram::Forward => false,
                    $( SwitchProgram::$variant(_) => <$ty as SwitchLogic>::ON_DEQUEUE, )+
                }
            }
            /// A frame starts leaving one of the switch's output queues.
            #[inline]
            pub fn on_dequeue(&mut self, now: SimTime, pkt: &Packet) {
                match self {
                    SwitchProgram::Forward => {}
                    $( SwitchProgram::$variant(p) => p.on_dequeue(now, pkt), )+
                }
            }
            /// Adds the program's counters to the run's.
            pub fn report(&self, stats: &mut ModuleStats, counters: &Counters) {
                match self {
                    SwitchProgram::Forward => {}
                    $( SwitchProgram::$variant(p) => p.report(stats, counters), )+
                }
            }
        }
    };
}

switch_programs! {
    /// PL2's ToR scheduler.
    Pl2(crate::transport::pl2::Pl2Switch),
}
