import TwoScaleCLI

await TwoScaleMain.runMain()
