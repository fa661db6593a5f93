/**
 * Clock in milliseconds since the epoch, like Date.now; injected so that tests control time. Declared
 * here, once, because both sides of a signature need one: the client stamps X-Timestamp and checks a
 * callback's age with it, the platform checks a request's age. src/signing is the one place both the
 * client and the platform import (the client may import nothing of src/server).
 */
export type Clock = () => number;
