//! Reductions across devices: a [`Communicator`] over several GPUs (through NCCL) or
//! several emulated devices, an element-wise [`AllReducer`] of device buffers, and a
//! [`ShardedReducer`] that reduces an array sharded across the devices to one value.
//!
//! ```
//! # fn main() -> Result<(), warpsafe_host::Error> {
//! use warpsafe::op::Sum;
//! use warpsafe_host::collective::{AllReducer, Communicator, ShardedReducer};
//! use warpsafe_host::Device;
//!
//! // Two emulated devices (on a GPU machine: `Communicator::new(&Device::gpus()?)`).
//! let devices = [Device::emulator(), Device::emulator()];
//! let comm = Communicator::new(&devices)?;
//!
//! // Gradient averaging: every rank ends with the element-wise sum of all ranks' buffers.
//! let mut grads = vec![devices[0].upload(&[1.0f32, 2.0])?, devices[1].upload(&[10.0f32, 20.0])?];
//! AllReducer::<f32, Sum>::new(&comm)?.all_reduce(&mut grads)?;
//! assert_eq!(grads[1].download()?, vec![11.0, 22.0]);
//!
//! // One array in two shards (of any lengths): one sum, the same bits on every rank.
//! let shards = vec![devices[0].upload(&[1u64, 2, 3])?, devices[1].upload(&[4u64])?];
//! assert_eq!(ShardedReducer::<u64, Sum>::new(&comm)?.reduce(&shards)?, 10);
//! # Ok(())
//! # }
//! ```
//!
//! # Ranks and processes
//! A communicator has `ranks` ranks, one per device; this process drives some of them
//! (its *local* ranks). Two ways to make one:
//! - [`Communicator::new`]: every rank in this process, one per device given (rank `r` is
//!   `devices[r]`): all the GPUs of a machine, or several emulated devices.
//! - [`Communicator::join`]: one rank per call, for one process (or thread) per GPU, on
//!   one host or several. Rank 0 makes a [`UniqueId`] and sends its text form to the
//!   others by any means (an environment variable set by the launcher, a file on a
//!   shared disk, a key-value store, MPI's broadcast); every rank then joins with the id,
//!   its rank and the rank count. Under `mpirun`, the rank and count are
//!   `OMPI_COMM_WORLD_RANK`/`OMPI_COMM_WORLD_SIZE` (Open MPI) or `PMI_RANK`/`PMI_SIZE`
//!   (MPICH); under Slurm's `srun`, `SLURM_PROCID`/`SLURM_NTASKS`, and the device is
//!   usually `SLURM_LOCALID`. Joining waits for every rank until the
//!   [`CommunicatorOptions::timeout`]; a rank that never comes is
//!   [`Error::CollectiveTimeout`], not a hang.
//!
//! Every rank must call the same operations in the same order with the same lengths, as
//! with NCCL. The waiting forms ([`AllReducer::all_reduce`], [`ShardedReducer::reduce`])
//! wait at most the timeout for the other ranks, then abort the communicator and return
//! [`Error::CollectiveTimeout`].
//!
//! # Transports
//! GPUs communicate through NCCL, loaded at run time (`libnccl.so.2`, or the file
//! `$WARPSAFE_NCCL_LIBRARY` names): a machine without NCCL builds and runs everything
//! else, and a GPU communicator there is [`Error::NcclUnavailable`]. Emulated devices
//! communicate through an in-process clique with NCCL's semantics, so the sharding and
//! combining logic is tested without a GPU.
//!
//! # Operators
//! Every [`Reduction`](crate::reduce::Reduction) works. NCCL applies `Sum`, `Min` and
//! `Max` over `i32`, `u32`, `i64`, `u64`, `f32` and `f64` itself (`ncclAllReduce`: no
//! copies beyond NCCL's own).
//! For every other operator (the bitwise ones, your own over any `Pod` type) the
//! [`AllReducer`] all-gathers the ranks' buffers (`ncclAllGather`, `ranks * len`
//! elements of scratch per rank) and folds the copies in rank order on each device with
//! the operator's `fold_copies` kernel.
//!
//! # Determinism
//! The [`ShardedReducer`] reduces each shard with the single-GPU [`Reducer`] (bitwise
//! deterministic), all-gathers the per-rank partials and folds them on the host in rank
//! order: given the same sharding, the result is the same bits on every rank and every
//! run, for every operator, whatever algorithm NCCL picks. The [`AllReducer`]'s folded
//! path is deterministic the same way; NCCL's own all-reduce gives identical results on
//! every rank, and the same bits from run to run as long as NCCL picks the same algorithm
//! (fixed for a given size, rank count and topology unless `NCCL_ALGO`/`NCCL_PROTO`
//! change).
//!
//! [`Reducer`]: crate::reduce::Reducer

mod emulated;
mod nccl;

mod all_reduce;
mod communicator;
mod sharded;

use crate::Error;

pub use all_reduce::AllReducer;
pub use communicator::{Communicator, CommunicatorOptions, UniqueId};
pub use nccl::LIBRARY_VARIABLE as NCCL_LIBRARY_VARIABLE;
pub use sharded::ShardedReducer;

/// The version `(major, minor, patch)` of the NCCL this process loads (loading it on
/// first use).
///
/// # Errors
/// [`Error::NcclUnavailable`] when NCCL cannot be loaded; the message says what was
/// tried and how to fix it.
pub fn nccl_version() -> Result<(u32, u32, u32), Error> {
    nccl::library().map(|nccl| nccl.version())
}
