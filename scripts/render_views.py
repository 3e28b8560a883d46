# Renders the standard views of a dgrte angular run to PNG with ParaView, headless:
#
#     xvfb-run -a pvbatch scripts/render_views.py OUTDIR [--size 1200x800]
#
# OUTDIR is a `dgrte run` output folder (solution.vtu, walls.vtu). Writes, into OUTDIR:
#   view_G.png     incident radiation G on the mid-plane slices x, y, z through the centre
#   view_divq.png  the radiative source div q on the same slices
#   view_walls.png net wall heat flux q_net (positive into the wall) on the boundary
# Needs ParaView >= 5.5 (Lagrange cells); Debian 12: apt-get install paraview python3-paraview xvfb.
#
# Why Tessellate: Slice and Clip cut each Lagrange cell through its corner points only, so the
# display's NonlinearSubdivisionLevel (which refines surfaces of the dataset itself) does nothing
# for them. Tessellate first turns each high-order cell into small linear ones that follow the
# polynomial (ChordError, MaximumNumberofSubdivisions), then the slice shows the DG field inside.
import os
import sys

from paraview.simple import (ColorBy, GetActiveViewOrCreate, GetColorTransferFunction, GetScalarBar, Hide,
                             ResetCamera, SaveScreenshot, Show, Slice, Tessellate, XMLUnstructuredGridReader)


def parse(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.exit(__doc__ if __doc__ else "usage: pvbatch render_views.py OUTDIR [--size WxH]")
    outdir, size = argv[1], (1200, 800)
    if "--size" in argv:
        w, h = argv[argv.index("--size") + 1].lower().split("x")
        size = (int(w), int(h))
    for name in ("solution.vtu", "walls.vtu"):
        if not os.path.isfile(os.path.join(outdir, name)):
            sys.exit(f"{outdir}: no {name}; give the output folder of an angular `dgrte run` (with output.vtk true)")
    return outdir, size


def bounds_centre(source):
    b = source.GetDataInformation().GetBounds()
    return [(b[0] + b[1]) / 2, (b[2] + b[3]) / 2, (b[4] + b[5]) / 2]


def colour(view, display, array, title, association="POINTS"):
    ColorBy(display, (association, array))
    display.RescaleTransferFunctionToDataRange(True, False)
    display.SetScalarBarVisibility(view, True)
    lut = GetColorTransferFunction(array)
    lut.ApplyPreset("Inferno (matplotlib)", True)
    bar = GetScalarBar(lut, view)
    bar.Title = title
    bar.ComponentTitle = ""
    bar.TitleColor = bar.LabelColor = [0, 0, 0]


def main():
    outdir, size = parse(sys.argv)
    view = GetActiveViewOrCreate("RenderView")
    view.ViewSize = list(size)
    view.OrientationAxesVisibility = 1
    view.Background = [1, 1, 1]
    try:  # ParaView >= 5.10 uses palettes for the background
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass

    solution = XMLUnstructuredGridReader(FileName=[os.path.join(outdir, "solution.vtu")])
    solution.UpdatePipeline()
    centre = bounds_centre(solution)
    fine = Tessellate(Input=solution)
    fine.ChordError = 1e-3
    fine.MaximumNumberofSubdivisions = 3
    slices = []
    for normal in ([1, 0, 0], [0, 1, 0], [0, 0, 1]):
        s = Slice(Input=fine)
        s.SliceType = "Plane"
        s.SliceType.Origin = centre
        s.SliceType.Normal = normal
        slices.append(s)

    for array, title, png in (("G", "G [W/m^2]", "view_G.png"), ("divq", "div q [W/m^3]", "view_divq.png")):
        shown = [Show(s, view) for s in slices]
        for d in shown:
            colour(view, d, array, title)
        view.CameraPosition = [centre[0] + 3, centre[1] - 4, centre[2] + 2.5]
        view.CameraFocalPoint = centre
        view.CameraViewUp = [0, 0, 1]
        ResetCamera(view)
        SaveScreenshot(os.path.join(outdir, png), view, ImageResolution=list(size))
        for s in slices:
            Hide(s, view)

    walls = XMLUnstructuredGridReader(FileName=[os.path.join(outdir, "walls.vtu")])
    d = Show(walls, view)
    d.NonlinearSubdivisionLevel = 2  # a surface dataset: here the display subdivision does work
    colour(view, d, "q_net", "q_net [W/m^2] (into the wall)")
    ResetCamera(view)
    SaveScreenshot(os.path.join(outdir, "view_walls.png"), view, ImageResolution=list(size))
    for png in ("view_G.png", "view_divq.png", "view_walls.png"):
        print(os.path.join(outdir, png))


if __name__ == "__main__":
    main()
