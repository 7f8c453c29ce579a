//! The network model's building blocks: topology graphs, routing tables, NIC queues and
//! switch buffers. The simulation (`crate::sim`) wires them together.

pub mod buffer;
pub mod egress;
pub mod nic;
pub mod overrides;
pub mod program;
pub mod routing;
pub mod topology;
