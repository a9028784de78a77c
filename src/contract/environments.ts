import { z } from "zod";

/** An environment: a folder under $STATION_HOME/environments holding workflows (and agents) as files. */
export const Environment = z.looseObject({
  name: z.string(),
  directory: z.string(),
  default: z.boolean().describe("the environment a bare `stn sync` and the station's start sync"),
  workflow_files: z.number().describe("how many *.workflow.yaml|yml|json files its workflows/ folder holds"),
}).meta({ id: "Environment" });
export type Environment = z.infer<typeof Environment>;

export const EnvironmentList = z.looseObject({ environments: z.array(Environment) }).meta({
  id: "EnvironmentList",
});
export type EnvironmentList = z.infer<typeof EnvironmentList>;
