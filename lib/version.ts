// The logbook version, written into session records as the build that wrote them.

/** This build of logbook. */
export const VERSION = "0.1.0";
