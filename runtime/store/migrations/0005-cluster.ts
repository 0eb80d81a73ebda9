/** Tables of the cluster part. */
export const sql = `
SELECT 1;
`;
