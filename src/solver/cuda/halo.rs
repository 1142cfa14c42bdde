//! The halo exchange's side of the GPU: a copy stream beside the main one and pinned host
//! staging for the send and receive blocks, so that the copies run while kernels do
//! (Jacobsen, Thibault and Senocak, "An MPI-CUDA implementation for massively parallel
//! incompressible flow computations on multi-GPU clusters", 2010, Listing 4).
//!
//! Completion is tracked with our own events: with cudarc's event tracking off (see
//! `CudaBackend::new`), cudarc records no event on pinned buffers, so their own `as_slice`
//! would not wait.

use super::launch::CudaReal;
use anyhow::{bail, Context, Result};
use cudarc::driver::{sys::CUevent_flags, CudaContext, CudaEvent, CudaSlice, CudaStream, PinnedHostSlice};
use std::ops::Range;
use std::sync::Arc;

pub struct HaloStaging<T> {
    copy: Arc<CudaStream>,
    send: [PinnedHostSlice<T>; 2],
    recv: [PinnedHostSlice<T>; 2],
    /// The send block has arrived in `send`.
    downloaded: Option<CudaEvent>,
    /// The last upload has left `recv` (it may be overwritten).
    uploaded: Option<CudaEvent>,
}

impl<T: CudaReal> HaloStaging<T> {
    /// Staging for a send block of `send_words` floats and a receive block of `recv_words`.
    pub fn new(ctx: &Arc<CudaContext>, send_words: usize, recv_words: usize) -> Result<Self> {
        // Plain page-locked memory (flags 0): the host reads the send staging back, which
        // write-combined memory makes slow.
        // SAFETY: the staging is written (by a copy or the host) before it is read.
        let pinned = |n: usize| unsafe { ctx.alloc_pinned_with_flags::<T>(n.max(1), 0) };
        Ok(HaloStaging {
            copy: ctx.new_stream().context("creating the copy stream")?,
            send: [pinned(send_words)?, pinned(send_words)?],
            recv: [pinned(recv_words)?, pinned(recv_words)?],
            downloaded: None,
            uploaded: None,
        })
    }

    pub fn send_capacity(&self) -> usize {
        self.send[0].len()
    }

    /// Queue the copy of `words` of `v1` and `v2` to the send staging, on the copy stream,
    /// once the main stream's work so far (the update) is done.
    pub fn begin_download(
        &mut self,
        main: &CudaStream,
        v1: &CudaSlice<T>,
        v2: &CudaSlice<T>,
        words: Range<usize>,
    ) -> Result<()> {
        self.copy.wait(&main.record_event(None)?)?;
        let what = "copying the send block to the host";
        self.copy.memcpy_dtoh(&v1.slice(words.clone()), &mut self.send[0]).context(what)?;
        self.copy.memcpy_dtoh(&v2.slice(words), &mut self.send[1]).context(what)?;
        self.downloaded = Some(self.copy.record_event(Some(CUevent_flags::CU_EVENT_BLOCKING_SYNC))?);
        Ok(())
    }

    /// Wait for the download and copy it out to `v1` and `v2` (as many floats as they hold).
    pub fn finish_download(&mut self, v1: &mut [T], v2: &mut [T]) -> Result<()> {
        let what = "copying the send block to the host";
        if let Some(done) = self.downloaded.take() {
            done.synchronize().context(what)?;
        }
        for (out, staged) in [(v1, &self.send[0]), (v2, &self.send[1])] {
            let src = staged.as_slice().context(what)?;
            let n = out.len();
            out.copy_from_slice(&src[..n]);
        }
        Ok(())
    }

    /// Stage `a` and `b` and queue their copy to `words` of `v1` and `v2`; the main stream
    /// (the communication edges) waits for the copy, the host does not.
    #[allow(clippy::too_many_arguments)]
    pub fn upload(
        &mut self,
        main: &CudaStream,
        a: &[T],
        b: &[T],
        v1: &mut CudaSlice<T>,
        v2: &mut CudaSlice<T>,
        words: Range<usize>,
    ) -> Result<()> {
        if a.len() != words.len() || b.len() != words.len() {
            bail!("receive block of {} floats for {} floats of cells", a.len(), words.len());
        }
        let what = "copying the receive block to the GPU";
        if let Some(done) = self.uploaded.take() {
            done.synchronize().context(what)?;
        }
        for (k, src) in [a, b].into_iter().enumerate() {
            self.recv[k].as_mut_slice().context("staging the receive block")?[..src.len()].copy_from_slice(src);
        }
        self.copy.memcpy_htod(&self.recv[0], &mut v1.slice_mut(words.clone())).context(what)?;
        self.copy.memcpy_htod(&self.recv[1], &mut v2.slice_mut(words)).context(what)?;
        let done = self.copy.record_event(Some(CUevent_flags::CU_EVENT_BLOCKING_SYNC))?;
        main.wait(&done)?;
        self.uploaded = Some(done);
        Ok(())
    }

    /// No slice may be freed while a copy still uses it.
    pub fn synchronize(&self) -> Result<()> {
        self.copy.synchronize()?;
        Ok(())
    }
}
