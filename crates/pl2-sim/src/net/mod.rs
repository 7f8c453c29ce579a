//! The network model's building blocks: topology graphs, routing tables, NIC queues,
//! switch buffers, and the circuit schedule of a reconfigurable network. The simulation (`crate::sim`) wires them together.

pub mod buffer;
pub mod circuit;
pub mod egress;
pub mod nic;
pub mod overrides;
pub mod program;
pub mod routing;
pub mod topology;
