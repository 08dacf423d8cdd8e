target datalayout = "e-p2x"

define i32 @main() {
  ret i32 0
}
