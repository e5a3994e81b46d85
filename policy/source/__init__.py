"""Pack source: YAML read with positions, the shipped JSON Schemas and their errors for people."""
