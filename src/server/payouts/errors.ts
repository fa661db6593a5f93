// A payout request that no chain would take (an address that is not one, an amount of zero, fees out of
// order): refused before anything is signed.
export class PayoutRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PayoutRequestError';
  }
}
