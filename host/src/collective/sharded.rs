//! [`ShardedReducer`]: one array sharded across the ranks, reduced to one value.

use bytemuck::Pod;

use super::communicator::Communicator;
use crate::reduce::{Reducer, Reduction};
use crate::{DeviceBuffer, Error, Stream};

/// Reduces one array sharded across the ranks with `O` to one value, the same on every
/// rank: each device reduces its shard with the single-GPU [`Reducer`] (one launch),
/// the ranks all-gather their partial results, and every rank folds them in rank order
/// (see the module docs on determinism). Shards may have any lengths, empty ones
/// included.
pub struct ShardedReducer<T: Pod, O: Reduction<T>> {
    comm: Communicator,
    reducers: Vec<Reducer<T, O>>,
    /// Each local rank's partial (one element).
    partials: Vec<DeviceBuffer<T>>,
    /// Each local rank's gathered partials (one per rank).
    gathered: Vec<DeviceBuffer<T>>,
    /// With remote ranks: the shard lengths, exchanged (an empty total decides `None`
    /// for min and max).
    lengths: Option<Lengths>,
}

/// Each local rank's shard length and the gathered lengths of all ranks, on its device.
struct Lengths {
    own: Vec<DeviceBuffer<u64>>,
    all: Vec<DeviceBuffer<u64>>,
}

impl<T: Pod, O: Reduction<T>> std::fmt::Debug for ShardedReducer<T, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedReducer")
            .field("type", &std::any::type_name::<T>())
            .field("operator", &std::any::type_name::<O>())
            .field("comm", &self.comm)
            .finish()
    }
}

impl<T: Pod, O: Reduction<T> + 'static> ShardedReducer<T, O> {
    /// A sharded reducer over `comm`'s ranks: a [`Reducer`] per local device and the
    /// scratch of the combining step.
    ///
    /// # Errors
    /// As for [`Reducer::new`].
    pub fn new(comm: &Communicator) -> Result<Self, Error> {
        let local = &comm.inner.local;
        let ranks = comm.ranks();
        let reducers = local.iter().map(|l| Reducer::new(&l.device)).collect::<Result<Vec<_>, _>>()?;
        let partials = local.iter().map(|l| l.device.alloc_zeroed(1)).collect::<Result<Vec<_>, _>>()?;
        let gathered = local.iter().map(|l| l.device.alloc_zeroed(ranks)).collect::<Result<Vec<_>, _>>()?;
        let lengths = if comm.has_remote_ranks() {
            Some(Lengths {
                own: local.iter().map(|l| l.device.alloc_zeroed(1)).collect::<Result<Vec<_>, _>>()?,
                all: local.iter().map(|l| l.device.alloc_zeroed(ranks)).collect::<Result<Vec<_>, _>>()?,
            })
        } else {
            None
        };
        Ok(ShardedReducer { comm: comm.clone(), reducers, partials, gathered, lengths })
    }

    /// Reduces the array whose shards this process holds (`shards[i]` is local rank
    /// `i`'s) and returns the result, the same bits on every rank. Waits.
    ///
    /// # Errors
    /// [`Error::RankMismatch`] for a shard count other than the local ranks';
    /// [`Error::NotInCommunicator`] for a shard of another device;
    /// [`Error::CollectiveTimeout`] when other ranks do not take part within the timeout;
    /// reduction, [`Error::Nccl`] and driver failures.
    pub fn reduce(&mut self, shards: &[DeviceBuffer<T>]) -> Result<O::Output, Error> {
        const OPERATION: &str = "sharded reduce";
        let comm = self.comm.clone();
        let local = &comm.inner.local;
        comm.check_placement(OPERATION, "shard", &shards.iter().collect::<Vec<_>>())?;
        let streams: Vec<&Stream> = local.iter().map(|l| &l.stream).collect();
        for (i, shard) in shards.iter().enumerate() {
            // SAFETY: the shard and the partial stay borrowed until the wait below; this
            // reducer's launches all run on this rank's one stream.
            unsafe { self.reducers[i].reduce_on(streams[i], shard, &self.partials[i])? };
        }
        if let Some(Lengths { own, .. }) = &mut self.lengths {
            for (buffer, shard) in own.iter_mut().zip(shards) {
                buffer.copy_from_host(&[shard.len() as u64])?;
            }
        }
        let partials: Vec<u64> = self.partials.iter().map(DeviceBuffer::device_address).collect();
        let gathered: Vec<u64> = self.gathered.iter().map(DeviceBuffer::device_address).collect();
        // SAFETY: each partial holds one T and each gathered buffer `ranks`, on their
        // rank's device, used by nothing else until the wait below.
        unsafe { comm.all_gather_raw(&partials, &gathered, std::mem::size_of::<T>(), &streams)? };
        if let Some(Lengths { own, all }) = &self.lengths {
            let own: Vec<u64> = own.iter().map(DeviceBuffer::device_address).collect();
            let all: Vec<u64> = all.iter().map(DeviceBuffer::device_address).collect();
            // SAFETY: as above, for one u64 per rank.
            unsafe { comm.all_gather_raw(&own, &all, std::mem::size_of::<u64>(), &streams)? };
        }
        comm.wait(None, OPERATION)?;
        let op = O::default();
        let value = self.gathered[0].download()?.into_iter().fold(op.identity(), |a, b| op.combine(a, b));
        let total = match &self.lengths {
            Some(Lengths { all, .. }) => all[0].download()?.iter().sum::<u64>() as usize,
            None => shards.iter().map(DeviceBuffer::len).sum(),
        };
        Ok(O::output(value, total))
    }
}
