import { z } from "zod";

/** A model's price in US dollars per million tokens (`ai.prices` values). */
export const ModelPrice = z.strictObject({
  input_per_million: z.number().min(0).describe("USD per million input tokens"),
  output_per_million: z.number().min(0).describe("USD per million output tokens"),
  cached_input_per_million: z.number().min(0).optional().describe(
    "USD per million input tokens read from the provider's prompt cache (default: input_per_million)",
  ),
});
export type ModelPrice = z.infer<typeof ModelPrice>;
