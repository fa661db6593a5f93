// A background job run over and over: at once again while it reports work done (catching up), after
// the interval when idle or failed. stop() waits for the run under way.

export type Job = () => Promise<boolean>;

export function runRepeatedly(job: Job, intervalMs: number, onError: (error: unknown) => void): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<boolean> | undefined;
  let stopped = false;
  const tick = async () => {
    let busy = false;
    try {
      running = job();
      busy = await running;
    } catch (error) {
      onError(error);
    }
    if (!stopped) timer = setTimeout(tick, busy ? 0 : intervalMs);
  };
  timer = setTimeout(tick, 0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => {});
    },
  };
}
