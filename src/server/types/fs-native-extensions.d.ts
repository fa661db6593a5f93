// The part of fs-native-extensions (holepunch) the platform uses: an OS file lock (fcntl OFD locks on
// Linux, flock on macOS, LockFileEx on Windows), released by the kernel when the holder dies.
declare module 'fs-native-extensions' {
  /** Takes the lock if it is free: true when granted, false when another open file holds it. */
  export function tryLock(fd: number, offset?: number, length?: number, options?: { shared?: boolean }): boolean;
}
