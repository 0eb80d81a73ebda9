/** Tables of the alerts part. */
export const sql = `
SELECT 1;
`;
