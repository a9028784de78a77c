/**
 * `--ai-template` instructions (docs/faker.md#templates): the built-in ones, under the names Station users
 * know, and config.yaml's `faker.templates`, which add to and override them.
 */

import type { Config } from "../config/schema.ts";
import { usageError } from "../errors.ts";
import { didYouMean } from "../lib/did_you_mean.ts";

/** A named instruction for generated data, with the model it prefers. */
export interface FakerTemplate {
  name: string;
  description: string;
  instruction: string;
  model?: string;
}

const BUILT_IN: Record<string, Omit<FakerTemplate, "name">> = {
  "aws-finops": {
    description: "AWS cost management and optimisation",
    instruction:
      "Answer like AWS Cost Explorer and Billing: costs and usage by service, account, region and " +
      "tag over the requested period, forecasts, anomalies, Reserved Instance and Savings Plans coverage, " +
      "budgets. Use realistic amounts in USD with a few clear cost drivers.",
  },
  "gcp-finops": {
    description: "GCP billing and cost optimisation",
    instruction:
      "Answer like GCP Cloud Billing: costs by project, service, SKU and label for the requested " +
      "period, budgets and alerts, committed-use and idle-resource recommendations, with realistic amounts.",
  },
  "azure-finops": {
    description: "Azure cost management and optimisation",
    instruction:
      "Answer like Azure Cost Management: costs by subscription, resource group, resource and tag, " +
      "forecasts, anomalies, budgets and Advisor recommendations, with realistic amounts.",
  },
  "datadog-monitoring": {
    description: "Datadog metrics, logs and monitors",
    instruction:
      "Answer like Datadog's API: metric time series, log entries, APM traces, monitor states and " +
      "alert history for a production service, with a plausible incident in progress.",
  },
  "stripe-payments": {
    description: "Stripe payments and subscriptions",
    instruction:
      "Answer like Stripe's API: payment intents, customers, subscriptions, invoices, products and " +
      "prices with Stripe's object shapes and ids (pi_…, cus_…, sub_…), amounts in cents.",
  },
};

/** Every template: the built-in ones and config.yaml's, by name. */
export function templates(config: Config): FakerTemplate[] {
  const all = { ...BUILT_IN, ...config.faker.templates };
  return Object.entries(all).map(([name, t]) => ({ name, ...t })).sort((a, b) =>
    a.name.localeCompare(b.name)
  );
}

/** The template of a name; an unknown name is a usage error listing the known ones. */
export function template(config: Config, name: string): FakerTemplate {
  const all = templates(config);
  const found = all.find((t) => t.name === name);
  if (found) return found;
  const near = didYouMean(name, all.map((t) => t.name));
  throw usageError(
    "invalid_usage",
    `--ai-template ${name}: no such template${near ? ` (did you mean ${near}?)` : ""}`,
    `the templates are ${
      all.map((t) => t.name).join(", ")
    }; add your own under faker.templates in config.yaml`,
  );
}
