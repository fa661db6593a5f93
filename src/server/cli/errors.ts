// The two ways an operator command ends short, each with its exit code (see ../cli.ts).

/** A mistake in the command line: exit 64, with a pointer to the command's help. */
export class UsageError extends Error {}

/** The command ran but found nothing, or the platform refused what it asked: exit 1. */
export class RefusedError extends Error {}
