/** Tables of the auth part. */
export const sql = `
SELECT 1;
`;
