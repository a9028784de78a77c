/** Labels on every sandbox container (besides dev.stn.managed), so they can be found after a restart. */
export const LABELS = {
  station: "dev.stn.station",
  session: "dev.stn.session",
  scope: "dev.stn.scope",
  run: "dev.stn.run",
  createdAt: "dev.stn.created_at",
} as const;
