"""Export of hybrid blocks: MXNet symbol JSON + params, and a StableHLO artifact."""
