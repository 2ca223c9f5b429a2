-- A CPU-bound program for GHC's cost-centre profiler: main calls middle and other, both
-- end in leaf (each a cost centre of its own, -fprof-auto).
module Main (main) where

import Data.List (foldl')

leaf :: Int -> Double
leaf n = foldl' (\s i -> s + sqrt (fromIntegral i) * fromIntegral (i `mod` 7)) 0 [0 .. n]

middle :: Int -> Double
middle n = leaf n + leaf (n `div` 2)

other :: Int -> Double
other n = sum [leaf (n `div` 4) | _ <- [1 .. 4 :: Int]]

main :: IO ()
main = print (sum [middle 2000000 + other (2000000 + k) | k <- [1 .. 8]])
