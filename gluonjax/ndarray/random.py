"""``nd.random``: samplers (placeholder filled by the random ops)."""
