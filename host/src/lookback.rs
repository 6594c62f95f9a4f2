//! The look-back scratch of the host's single-pass launches (`scan`, `segmented`):
//! epoch-tagged status words, grown with the input, and the self-resetting tile counter
//! (`warpsafe::scan::lookback`).

use std::cell::Cell;

use warpsafe::scan::lookback::MAX_EPOCH;

use crate::{Device, DeviceBuffer, Error, Stream};

/// The look-back scratch one scanner, selector or segmented reducer owns: epoch-tagged
/// status words and the self-resetting tile counter.
pub(crate) struct LookBackScratch {
    pub(crate) device: Device,
    /// Status words for the most tiles seen so far.
    status: DeviceBuffer<u64>,
    /// The status words `tiles` tiles need (`warpsafe::scan::lookback::status_words`).
    words_for: fn(u64) -> u64,
    /// The tile ticket counter: 0 between launches.
    counter: DeviceBuffer<u32>,
    /// The epoch of the last launch: each launch takes the next, never 0.
    epoch: Cell<u32>,
    /// Set when a launch failed (a block may have taken a ticket without the launch
    /// completing): the counter and words are zeroed before the next launch.
    dirty: Cell<bool>,
}

/// What one launch gets from [`LookBackScratch::prepare`].
pub(crate) struct Slots {
    pub(crate) status: u64,
    pub(crate) counter: u64,
    pub(crate) epoch: u32,
}

impl LookBackScratch {
    pub(crate) fn new(device: &Device, words_for: fn(u64) -> u64) -> Result<LookBackScratch, Error> {
        Ok(LookBackScratch {
            device: device.clone(),
            status: device.alloc_zeroed(words_for(1) as usize)?,
            words_for,
            counter: device.alloc_zeroed(1)?,
            epoch: Cell::new(0),
            dirty: Cell::new(false),
        })
    }

    /// Status words for `tiles` tiles, the counter and a fresh epoch for one launch on
    /// `stream`. Growing the words or zeroing them first waits for `stream` and the
    /// owner's own stream `own` (an earlier launch may still use them).
    pub(crate) fn prepare(&mut self, tiles: u64, stream: &Stream, own: &Stream) -> Result<Slots, Error> {
        let needed = usize::try_from((self.words_for)(tiles)).ok();
        let Some(needed) = needed else {
            return Err(Error::unsupported("look-back status words beyond the address space"));
        };
        let wraps = self.epoch.get() == MAX_EPOCH;
        if needed > self.status.len() || self.dirty.get() || wraps {
            stream.synchronize()?;
            own.synchronize()?;
            if needed > self.status.len() {
                // A new allocation is zeroed: no word holds any epoch.
                self.status = self.device.alloc_zeroed(needed)?;
            } else {
                self.status.copy_from_host(&vec![0; self.status.len()])?;
            }
            // Zeroed words hold no epoch, so the epochs may start again (and must, when
            // they were about to wrap).
            self.epoch.set(0);
            if self.dirty.get() {
                self.counter.copy_from_host(&[0])?;
                self.dirty.set(false);
            }
        }
        let epoch = self.epoch.get() + 1;
        self.epoch.set(epoch);
        Ok(Slots { status: self.status.device_address(), counter: self.counter.device_address(), epoch })
    }

    pub(crate) fn note_failure(&self, launched: &Result<(), Error>) {
        if launched.is_err() {
            self.dirty.set(true);
        }
    }
}
